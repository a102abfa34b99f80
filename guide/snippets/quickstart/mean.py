from statistics import mean, median

marks = [12, 15, 9, 17, 14, 11]
print("mean:", mean(marks))
print("median:", median(marks))
