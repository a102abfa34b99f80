import locale
import sys
import time

print(locale.getlocale(), locale.getpreferredencoding(False), sys.getfilesystemencoding())
print(locale.setlocale(locale.LC_ALL), time.tzname, time.strftime("%c %Z", time.gmtime(0)))
print(sys.flags.utf8_mode, sys.getdefaultencoding())
