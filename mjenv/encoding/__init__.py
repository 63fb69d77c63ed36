"""What an agent sees and does: the action layout and the observation encodings."""
