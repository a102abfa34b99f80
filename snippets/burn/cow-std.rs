use std::alloc::{GlobalAlloc, Layout, System};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

// 只计数的全局分配器：把每次 alloc 的字节数加起来，真正的分配交给 System
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

/// 运行 f，返回它的结果和这段时间里向分配器要的字节数
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATED.load(Ordering::Relaxed);
    let out = f();
    (out, ALLOCATED.load(Ordering::Relaxed) - before)
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// 「x = x * 2 + 1」：有别人持有这块缓冲时，make_mut 先复制一份再写
fn affine(buf: &mut Rc<Vec<f32>>) {
    for v in Rc::make_mut(buf).iter_mut() {
        *v = *v * 2.0 + 1.0;
    }
}

fn main() {
    let n = 1usize << 20; // 2^20 个 f32 = 4 MiB
    let mut x = Rc::new(vec![0.0f32; n]);

    for step in 0..3 {
        let ((), bytes) = measure(|| affine(&mut x));
        println!(
            "独占，第 {step} 步：引用计数 {}，分配 {bytes} 字节（{:.3} MiB），x[0] = {}",
            Rc::strong_count(&x), mib(bytes), x[0]
        );
    }

    let saved = Rc::clone(&x); // 相当于 autodiff 为反向留下的那份引用
    let count = Rc::strong_count(&x);
    let ((), bytes) = measure(|| affine(&mut x));
    println!(
        "共享，第 3 步：引用计数 {count}，分配 {bytes} 字节（{:.3} MiB），x[0] = {}，saved[0] = {}",
        mib(bytes), x[0], saved[0]
    );
    println!("写完之后 x 和 saved 还共用缓冲吗: {}", Rc::ptr_eq(&x, &saved));
}
