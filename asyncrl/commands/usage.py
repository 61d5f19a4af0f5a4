"""The text of ``asyncrl --help``.

The CLI prints it without starting Hydra: Hydra's own help composes every option of every
config group to list them (seconds here) and shows internal groups (``_common``,
``schema/...``). ``tests/commands/test_cli.py`` checks that each option named here exists.
"""

USAGE = """\
asyncrl: train agents with the asynchronous methods of Mnih et al. (2016).

Usage: asyncrl [KEY=VALUE ...]            one run; outputs in outputs/DATE/TIME
       asyncrl -m [KEY=A,B ...]           a sweep; one run per value (multirun/...)
       asyncrl resume=RUN_DIR [total_frames=N]   continue a run from its checkpoint
       asyncrl init_from=CHECKPOINT [KEY=VALUE ...]  a new run from a checkpoint's
                                          weights, optimizer statistics and T

Choose (GROUP=OPTION):
  algo=        a3c (default), nstep_q, one_step_q, one_step_sarsa
  network=     ff (default), lstm, gaussian (continuous actions)
  optimizer=   shared_rmsprop (default), rmsprop (per worker), momentum_sgd
  env=         atari/pong (default), atari/GAME (57 games, or atari/any env.game=NAME),
               classic/cartpole, mujoco/TASK, mujoco/pixels/TASK, maze/small|medium|large,
               torcs/slow_car|fast_car[_bots], gym env.id=ID (any gymnasium id)
  setting=     tuned (default: the values measured best on the paper's six tuning games,
               where a family and algorithm have some: A3C on Atari), paper (the paper's
               own: k=1, t_max 5, unweighted losses, uncentred Atari input, 16 workers at
               most),
               base (neither: the defaults before 2026-12-07)
  +sweep=      lr_loguniform: the paper's 50 lr draws from LogUniform(1e-4, 1e-2), with -m
               (each run from its env's range: MuJoCo 1e-5 to 1e-1)
  +experiment= paper (the paper's settings wherever it states them: setting=paper)
               atari57 (with -m: all 57 games, the default setting, 5M frames each,
               evaluated)
               atari_five_games (with -m, setting=paper: Figures 1-2, 50 lr draws on five
               games)
               optimizer_comparison (with -m, setting=paper: Figure S-optimization, 3
               optimizers, 4 games)
               worker_scaling (with -m, setting=paper: Table 2 and Figures 3-4, 1 to 16
               workers)
               mujoco_sweep (with -m, setting=paper: Figure S-mujoco, 50 lr draws on 9
               tasks)
               a3c_k16 (setting=base with k=16, RMSProp eps 1e-3, lr 1e-3)
               a3c_k16_orthogonal_bg (a3c_k16 with the torso started orthogonal and
               each screen's background subtracted)
               a3c_k16_t20 (a3c_k16 with t_max 20, lr 2e-3, RMSProp's g from 0.1)
               a3c_tuned_keys (the default Atari A3C setting as keys, for any image
               env)
               nstep_q_k16 (setting=base with n-step Q, k=16, RMSProp eps 1e-3, g from
               0.1, lr 1e-3)

Keys set most often (defaults in brackets):
  workers=N        actor-learner processes [the cores this process may use]
  total_frames=N   emulator frames over all workers; T in the log
                   [the env's: 40_000_000; classic/cartpole 150_000]
  lr=X             initial lr, annealed linearly to 0 [A3C: 3e-3 on Atari (setting=paper
                   or base: 7e-3 on Atari), 1.5e-3 on classic/cartpole, else 7e-4;
                   value-based methods: 7e-4]
  seed=N           [1]
  eval.interval_frames=N  eval.episodes=N  checkpoint.interval_seconds=S
  eval.final_episodes=N   the final weights play N episodes at the end [0] (evaluation.json)
  log.progress=false      plain log lines instead of the live panel
  hydra.run.dir=DIR       where the run writes (config, CSVs, TensorBoard, checkpoints)

Beyond the paper (each off under setting=paper; the tuned Atari A3C setting turns on the
torso's orthogonal start and the background's subtraction; docs/options.md):
  algo.gae_lambda=L        A3C: GAE(L) advantages, value target A + V [1: n-step]
  algo.lambda_return=L     nstep_q: lambda-returns within a segment [1: n-step]
  algo.double_q=true       one_step_q, nstep_q: target action by theta, valued by theta^-
  network.dueling=true     value-based: Q = V + A - mean(A) [false]
  network.spatial_softmax=true  ff, lstm on images: last conv -> expected (x, y) [false]
  network.conv=nature      ff, lstm on images: the Nature DQN's 3 convs [paper: 2]
  network.torso_init=orthogonal  ff, lstm on images: gain sqrt 2, bias 0 [lecun_bias;
                                 A3C on Atari: orthogonal]
  network.centre_on=background   ff, lstm on images: subtract the screen's commonest pixel
                                 [mean; A3C on Atari: background]
  algo.replay_capacity=N   one_step_q, nstep_q: each worker keeps its last N segments [0]
  algo.replay_ratio=K      ...and learns from K of them per new one (not checkpointed) [0]
  minibatches=M            envs_per_worker k > 1: learn from the k segments in M
                           optimizer steps, not one [1]

Examples:
  asyncrl env=classic/cartpole workers=2    # 150_000 frames: learns in about a minute
  asyncrl algo=nstep_q env=atari/seaquest
  asyncrl +experiment=paper env=atari/breakout   # the paper's settings
  asyncrl -m +experiment=atari57 hydra.sweep.dir=multirun/atari57   # again to carry it on
  asyncrl -m +sweep=lr_loguniform env=atari/breakout hydra.sweep.dir=multirun/breakout

Other commands: asyncrl-eval RUN_DIR (play, --video), asyncrl-report DIR (plots, tables),
asyncrl-probe (learning-speed readings), asyncrl-maze, asyncrl-torcs (install, check).
Docs: README.md and docs/.
Flags: --cfg job --resolve (every key and its value), -m (a sweep), --hydra-help (Hydra's).
"""
