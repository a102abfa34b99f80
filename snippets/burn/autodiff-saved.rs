use burn::backend::{Autodiff, Flex};
use burn::tensor::{backend::Backend, Tensor};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

// 只计数的全局分配器（与本页末尾纯 std 的那段相同）
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

fn head<B: Backend>(t: &Tensor<B, 1>, k: usize) -> Vec<f32> {
    t.clone().slice([0..k]).into_data().to_vec::<f32>().unwrap()
}

type B = Autodiff<Flex>;

fn main() {
    let device = Default::default();
    let n = 1usize << 22; // 2^22 个 f32 = 16 MiB
    let x = Tensor::<B, 1>::ones([n], &device);
    let w = Tensor::<B, 1>::full([n], 2.0, &device).require_grad();

    let y = x.clone() * w.clone(); // 对 w 求导要用 x：乘法节点留下 x 的一份引用
    println!("y = x * w 之后 x.can_mut() = {}", x.can_mut());

    // x += 1.0;     编译不过：Tensor 没有实现 AddAssign
    // x.add_(1.0);  也没有这个方法
    let (x, mib) = measure(|| x + 1.0); // 旧 x 按值进入加法，结果绑回名字 x
    println!("x = x + 1.0 分配了 {mib:.3} MiB，x[0] = {}", head(&x, 1)[0]);

    let grads = y.sum().backward(); // 不会报错
    let dw = w.grad(&grads).unwrap();
    println!("dL/dw[0..3] = {:?}（用的是加 1 之前的 x）", dw.slice([0..3]).into_data().to_vec::<f32>().unwrap());
}

// /// snipcheck
// requires = ["burn"]
// ///
