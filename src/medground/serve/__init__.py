"""medground.serve"""
