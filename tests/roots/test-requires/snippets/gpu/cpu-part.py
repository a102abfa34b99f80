print("runs on any machine")
