#!/bin/sh
# The image's entry point:
#   (nothing), serve ...        -> lakeplanner serve ...
#   ask|ingest|batch|... ARGS   -> lakeplanner ARGS (any lakeplanner command)
#   ray_jobs/batch_ask.py ARGS  -> python ray_jobs/batch_ask.py ARGS (a Ray job script, relative to /app)
#   anything else (ray, python, sh) runs as given.
set -e
[ "$#" -gt 0 ] || set -- serve
case "$1" in
  serve|ask|ingest|batch|plan|trace|replay|lake|schema|keys|--help)
    exec lakeplanner "$@" ;;
  *.py)
    exec python "$@" ;;
  *)
    exec "$@" ;;
esac
