import sys
print("<b>bold?</b> & <i>", file=sys.stderr)
raise ValueError("<script>alert(1)</script>")
