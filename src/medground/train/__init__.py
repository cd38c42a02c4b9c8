"""medground.train"""
