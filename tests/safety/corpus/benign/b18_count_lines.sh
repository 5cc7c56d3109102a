find . -name '*.py' -not -path './.venv/*' | xargs wc -l | sort -n | tail -20
git ls-files | grep -c '\.js$'
