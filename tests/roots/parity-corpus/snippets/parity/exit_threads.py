import threading
import time


def late():
    time.sleep(0.3)
    print("non-daemon thread finished after main")


def forever():
    time.sleep(5)
    print("daemon threads die with the interpreter: never printed")


threading.Thread(target=late).start()
threading.Thread(target=forever, daemon=True).start()
print("main done", threading.active_count())
