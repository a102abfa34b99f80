fn main() {
    let v: Vec<u8> = Vec::new();
    println!("about to index");
    println!("{}", v[7]);
}
// /// snipcheck
// expect = "panic"
// ///
