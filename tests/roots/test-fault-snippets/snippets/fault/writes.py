import os
open("in-cwd.txt", "w").write("x")
os.makedirs("snippets/fault", exist_ok=True)
open("snippets/fault/new.py", "w").write("print('planted')\n")
with open(__file__, "a") as f:
    f.write("# tampered\n")
os.chdir(os.path.dirname(os.path.abspath(__file__)))
open("after-chdir.txt", "w").write("x")
os.chdir("..")
open("../index.md", "w").write("# overwritten\n")
open(os.path.expanduser("~/.snippetrc"), "w").write("x")
print("wrote files")
