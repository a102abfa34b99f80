# /// snipcheck
# timeout = 1
# ///

import time
print('started', flush=True)
time.sleep(60)
