"""What runs inside the worker and evaluator processes: the actor-learner loop, the acting
loop, the evaluator, the state they share in memory, their seeds, and how each names
itself, routes its output and reports to the launcher."""
