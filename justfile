# A menu for people; the logic lives in xtask (cargo xtask --help).

# Build and start the embedded default on http://127.0.0.1:8080
up:
    cargo xtask up

# Every test, with the services they need started by the command itself
test *ARGS:
    cargo xtask test {{ARGS}}

# A benchmark: write-path, or all
bench NAME:
    cargo xtask bench {{NAME}}

# Mint a dev token: just token t1 alice
token TENANT USER:
    cargo run --quiet --package lattice -- token --tenant {{TENANT}} --user {{USER}}
