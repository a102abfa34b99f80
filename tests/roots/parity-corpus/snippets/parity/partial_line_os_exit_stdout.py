import os

# A terminal shows a line at its newline; os._exit drops what is still buffered.
print("a whole line")
print("part of a line", end="")
print(", its end, and the start of the next\nshown: written with a newline", end="")
print("never shown: a partial line os._exit drops", end="")
os._exit(0)
