import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

days = np.arange(1, 31)
temps = 20 + 5 * np.sin(days / 5) + np.random.normal(0, 1, len(days))
plt.figure(figsize=(10, 4))
plt.plot(days, temps, marker="o")
plt.title("Daily temperature")
plt.xlabel("Day")
plt.ylabel("°C")
plt.grid(True, alpha=0.3)
plt.tight_layout()
plt.savefig("temperatures.png", dpi=150)
print("saved temperatures.png")
