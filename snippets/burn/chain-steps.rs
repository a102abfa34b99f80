use burn::backend::Flex;
use burn::tensor::{Distribution, Tensor};
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

fn main() {
    let device = Default::default();
    let side = 4096; // 4096 × 4096 个 f32 = 64 MiB
    let mut x = Tensor::<Flex, 2>::random([side, side], Distribution::Default, &device);

    for step in 0..3 {
        let (next, mib) = measure(|| x * 2.0 + 1.0); // 两个按值运算，各自拿到独占的缓冲
        x = next;
        println!("第 {step} 步：x = x * 2.0 + 1.0 分配了 {mib:.3} MiB");
    }

    let snapshot = x.clone(); // 只多一份引用，不复制
    let (next, mib) = measure(|| x * 2.0 + 1.0);
    x = next;
    println!("留着一个 clone：x = x * 2.0 + 1.0 分配了 {mib:.3} MiB");
    drop((x, snapshot));
}

// /// snipcheck
// requires = ["burn"]
// ///
