import gc

print(gc.isenabled(), gc.get_threshold(), gc.get_debug())
