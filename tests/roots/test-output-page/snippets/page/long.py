print("needle", "y" * 5000, "haystack")
