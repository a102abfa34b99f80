fn main() {
    println!("hello from rust");
}
