import sys

print("status 300 & 0xFF")
sys.exit(300)
