"""What a run is given and runs with: its settings (`config.py`: options first, then the
environment, then the project defaults) and its worker processes (`spawn_pool.py`).

Above the store (where the warehouse is, when a run is asked to stop), below ingest,
transforms and reports, which read settings and start workers.
"""
