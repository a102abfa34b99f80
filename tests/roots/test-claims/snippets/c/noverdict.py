print("I checked something but printed no verdict")
