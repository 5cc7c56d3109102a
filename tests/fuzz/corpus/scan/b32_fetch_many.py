import asyncio
import aiohttp

URLS = [f"https://jsonplaceholder.typicode.com/posts/{i}" for i in range(1, 11)]


async def fetch(session, url):
    async with session.get(url) as resp:
        return await resp.json()


async def main():
    async with aiohttp.ClientSession() as session:
        posts = await asyncio.gather(*(fetch(session, u) for u in URLS))
    for p in posts:
        print(p["id"], p["title"][:50])


asyncio.run(main())
