use burn::backend::Flex;
use burn::tensor::{s, Tensor};
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
    let rows = 1 << 20; // 2^20 行 × 4 列 f32 = 16 MiB
    let a = Tensor::<Flex, 2>::zeros([rows, 4], &device);
    let v = Tensor::<Flex, 2>::ones([rows, 2], &device);

    // a 是缓冲的唯一持有者：写第 1、2 列不必另开一块
    let (a, mib) = measure(|| a.slice_assign(s![.., 1..3], v.clone()));
    println!("a 独占时 slice_assign 分配了 {mib:.3} MiB");

    // 留一个 clone 之后再写：a 的缓冲有两个持有者
    let keep = a.clone();
    let (a, mib) = measure(|| a.slice_assign(s![.., 1..3], v));
    println!("留着一个 clone 时 slice_assign 分配了 {mib:.3} MiB");
    drop((a, keep));
}

// /// snipcheck
// requires = ["burn"]
// ///
