import pandas as pd

df = pd.read_csv("sales.csv", parse_dates=["date"])
df["month"] = df["date"].dt.to_period("M")
summary = (
    df.groupby(["month", "region"])["revenue"]
    .sum()
    .unstack(fill_value=0)
    .round(2)
)
print(summary.tail())
summary.to_csv("monthly_revenue_by_region.csv")
print("Saved monthly_revenue_by_region.csv")
