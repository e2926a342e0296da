"""The JEDI/PanDA lifecycle simulator: a grid snapshot moved forward in time, every brokerage by the project's brokers."""
