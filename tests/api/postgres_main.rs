//! The black-box suite of `main.rs`, every app on the PostgreSQL engine: a throwaway
//! server (`switchboard_actors::store::test_postgres`) and a schema per data folder.

/// The engine of every app this binary starts.
const ENGINE: helpers::Engine = helpers::Engine::Postgres;

include!("suite.rs");

mod cluster;
