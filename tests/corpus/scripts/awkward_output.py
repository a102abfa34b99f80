"""
Outputs that look like markup
=============================

Each block prints what a directive body cannot hold as it is.
"""

print("trailing spaces   ")
print("a\ttab")

# %%
# Lines a parser could take for markup.

print(":name: an option?")
print(".. note:: a directive?")
print("```")
print("--- output ---")

# %%
# Blank lines around, indentation first.

print()
print("    indented first")
print("not indented")
print()
