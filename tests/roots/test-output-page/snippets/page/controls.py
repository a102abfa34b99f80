print("nul\x00 esc\x1b bel\x07 bs\x08 del\x7f csi\x9b ff\x0c vt\x0b nel\x85 ls\u2028 ps\u2029 end")
