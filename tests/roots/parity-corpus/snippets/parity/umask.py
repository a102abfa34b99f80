import os

old = os.umask(0o077)
print(oct(old), oct(os.umask(old)))
