class Broken:
    def __del__(self):
        raise ValueError("in __del__")


Broken()
print("the run goes on")
