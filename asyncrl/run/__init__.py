"""Running a run: the launcher (the parent process), the pool of worker and evaluator
processes it holds, the supervisor that decides what to do about one, the progress display,
and the sweeper that runs many."""
