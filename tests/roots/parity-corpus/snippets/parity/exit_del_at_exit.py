class Noisy:
    def __init__(self, name):
        self.name = name

    def __del__(self):
        print("released", self.name)


kept = Noisy("global")
Noisy("temporary")
print("main done")
