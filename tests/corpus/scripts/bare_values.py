"""
Values of bare expressions
==========================

The last statement of a block, when it is an expression, is shown as a
notebook shows it: its ``repr``.
"""

a, b = 1, 2
a + b

# %%
# A list, after a print: the print first, then the value.

print("building a list")
[x * x for x in range(4)]

# %%
# ``None`` shows nothing, like a notebook cell.

result = None
result

# %%
# An object with an HTML form shows its plain-text ``repr`` here.


class Table:
    def _repr_html_(self):
        return "<table><tr><td>1</td></tr></table>"

    def __repr__(self):
        return "Table(rows=1)"


Table()

# %%
# Only the last statement counts.

"not shown"
"shown"
