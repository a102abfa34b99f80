import os
import tempfile

# The preload (torch._dynamo) asks for the temporary folder: a run must still find its own.
print(tempfile.gettempdir() == os.environ["TMPDIR"], tempfile.gettempdir(), tempfile.tempdir)
with tempfile.NamedTemporaryFile() as f:
    print(os.path.dirname(f.name) == os.environ["TMPDIR"])
