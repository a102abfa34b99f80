"""Part of the package ``corpus_pkg``."""


def area(width, height):
    return width * height
