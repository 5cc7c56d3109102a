import requests
from bs4 import BeautifulSoup

url = "https://news.ycombinator.com/"
html = requests.get(url, headers={"User-Agent": "Mozilla/5.0"}, timeout=10).text
soup = BeautifulSoup(html, "html.parser")
for i, a in enumerate(soup.select(".titleline > a")[:10], 1):
    print(f"{i:2}. {a.get_text()}  ({a['href']})")
