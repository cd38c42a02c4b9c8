"""medground.eval"""
