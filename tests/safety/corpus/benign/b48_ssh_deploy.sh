#!/bin/bash
# deploy the static site to the web server
npm run build
rsync -avz --delete -e "ssh -i ~/.ssh/deploy_key" ./public/ deploy@web.example.com:/var/www/site/
ssh -i ~/.ssh/deploy_key deploy@web.example.com 'sudo systemctl reload nginx'
