print("after the escapes")
