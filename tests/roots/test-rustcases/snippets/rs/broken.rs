fn main() {
    let n: i32 = "not a number";
    println!("{}", n);
}
