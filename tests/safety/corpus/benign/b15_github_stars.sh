for repo in torvalds/linux python/cpython nodejs/node; do
  stars=$(curl -s "https://api.github.com/repos/$repo" | jq '.stargazers_count')
  echo "$repo: $stars"
done
