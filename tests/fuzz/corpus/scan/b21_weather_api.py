import json
import requests

API = "https://api.open-meteo.com/v1/forecast"
params = {"latitude": 52.52, "longitude": 13.41, "hourly": "temperature_2m"}
resp = requests.get(API, params=params, timeout=10)
resp.raise_for_status()
data = resp.json()
temps = data["hourly"]["temperature_2m"][:24]
print("Next 24h:", temps)
with open("forecast.json", "w") as f:
    json.dump(data, f, indent=2)
