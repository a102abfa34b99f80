use burn::backend::{Autodiff, Flex};
use burn::tensor::{backend::Backend, Tensor};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

fn measure<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let before = ALLOCATED.load(Ordering::Relaxed);
    let out = f();
    let bytes = ALLOCATED.load(Ordering::Relaxed) - before;
    (out, bytes as f64 / (1u64 << 20) as f64)
}

/// 和上一段同样的 y = x * w 与 x = x + 1.0，只是这一次没有人为反向留下 x
fn mul_then_add<B: Backend>(label: &str, device: &B::Device) {
    let n = 1usize << 22; // 16 MiB
    let x = Tensor::<B, 1>::ones([n], device);
    let w = Tensor::<B, 1>::full([n], 2.0, device); // 不调 require_grad()
    let _y = x.clone() * w;                          // 用完，x 的那份 clone 随即释放
    println!("{label}：y = x * w 之后 x.can_mut() = {}", x.can_mut());
    let (x, mib) = measure(|| x + 1.0);
    let x0 = x.slice([0..1]).into_data().to_vec::<f32>().unwrap()[0];
    println!("{label}：x = x + 1.0 分配了 {mib:.3} MiB，x[0] = {x0}");
}

fn main() {
    mul_then_add::<Flex>("不带 autodiff", &Default::default());
    mul_then_add::<Autodiff<Flex>>("带 autodiff、w 不要梯度", &Default::default());
}

// /// snipcheck
// requires = ["burn"]
// ///
