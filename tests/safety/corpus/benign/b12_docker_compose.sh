docker compose pull
docker compose up -d
docker compose ps
docker logs --tail 50 web
