# A menu for people; the logic lives in xtask (cargo xtask --help).

# The local stack: PostgreSQL and NATS started natively, each lattice service
# its own process, data under data/stack; the chat on http://127.0.0.1:8080
up:
    cargo xtask stack up

# Stop exactly what `just up` started
down:
    cargo xtask stack down

# The embedded default in one process (what `cargo up` runs)
embedded:
    cargo xtask up

# Every test, with the services they need started by the command itself
test *ARGS:
    cargo xtask test {{ARGS}}

# A benchmark: write-path, validator, bridge, web, edge, or all
bench NAME:
    cargo xtask bench {{NAME}}

# Mint a dev token: just token t1 alice
token TENANT USER:
    cargo run --quiet --package lattice -- token --tenant {{TENANT}} --user {{USER}}
