"""medground.index"""
