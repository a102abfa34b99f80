use burn::backend::Flex;
use burn::tensor::{backend::Backend, Tensor};

/// 手里只有 &mut 的地方：比如模型结构体里的一个字段
struct Scale<B: Backend> {
    gain: Tensor<B, 1>,
}

impl<B: Backend> Scale<B> {
    fn decay(&mut self, factor: f32) {
        // self.gain = self.gain * factor;  编译不过：不能把字段从 &mut self 里按值移走
        self.gain.inplace(|g| g * factor); // 取出、交给按值的闭包、放回
    }
}

fn main() {
    let device = Default::default();
    let mut layer = Scale::<Flex> { gain: Tensor::ones([4], &device) };
    layer.decay(0.5);
    let shared = layer.gain.clone(); // 有人共享时，inplace 照样会另开缓冲
    layer.decay(0.5);
    println!("gain = {:?}", layer.gain.into_data().to_vec::<f32>().unwrap());
    println!("shared = {:?}", shared.into_data().to_vec::<f32>().unwrap());
}

// /// snipcheck
// requires = ["burn"]
// ///
