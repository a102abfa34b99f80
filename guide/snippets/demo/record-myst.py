from _demo import CONF, show, snipcheck, sphinx_build, write

write({
    "conf.py": 'extensions = ["myst_parser", "snipcheck"]\n' + CONF.split("\n", 1)[1],
    "index.md": """\
        # Statistics

        ```{snippet-code} spread
        from statistics import pstdev
        print("spread:", pstdev([2, 4, 4, 4, 5, 5, 7, 9]))
        ```

        ```{snippet} spread
        ```
    """,
})
snipcheck("record")
show("index.md")
sphinx_build("-W")
