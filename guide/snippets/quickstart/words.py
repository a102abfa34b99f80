from collections import Counter

text = "the cat sat on the mat and the cat slept"
counts = Counter(text.split())
for word, n in counts.most_common(3):
    print(f"{word:>5} {n}")
