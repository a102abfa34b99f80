fn main() {
    println!("still here");
}
